#include "store/hash_type.h"
