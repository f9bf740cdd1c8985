// Fake generated parser header lines for the ABI check test (not a grammar).
#include "tree_sitter/parser.h"

#define LANGUAGE_VERSION 14
#define STATE_COUNT 1
