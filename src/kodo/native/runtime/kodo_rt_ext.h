/* The Kōdo native runtime's C++ part (docs/decisions/0076-kodo-native-builtins-speed.md): the
 * JSON and regex builtins, which use the interpreter's libraries (nlohmann-json, std::regex
 * ECMAScript) so that a native program gives the interpreter's results byte for byte. It is
 * compiled with the C++ compiler and linked only into programs that call one of these
 * builtins. */
#ifndef KODO_RT_EXT_H_
#define KODO_RT_EXT_H_

#include "kodo_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

KR_B1(kb_json_parse);
KR_B0(kb_json_new_object);
KR_B1(kb_json_free);
KR_B1(kb_json_stringify);
KR_B2(kb_json_get_string);
KR_B2(kb_json_get_int);
KR_B2(kb_json_get_bool);
KR_B2(kb_json_get_float);
KR_B2(kb_json_get_array);
KR_B2(kb_json_get_object);
KR_B3(kb_json_set_string);
KR_B3(kb_json_set_int);
KR_B3(kb_json_set_bool);
KR_B3(kb_json_set_float);
KR_B2(kb_regex_match);
KR_B2(kb_regex_find);
KR_B3(kb_regex_replace);

#ifdef __cplusplus
}
#endif

#endif /* KODO_RT_EXT_H_ */
