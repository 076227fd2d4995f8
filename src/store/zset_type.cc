#include "store/zset_type.h"
