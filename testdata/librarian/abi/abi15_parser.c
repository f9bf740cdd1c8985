// Fake generated parser header lines for the ABI check test (not a grammar): what
// tree-sitter CLI >= 0.25 generates.
#include "tree_sitter/parser.h"

#define LANGUAGE_VERSION 15
#define STATE_COUNT 1
