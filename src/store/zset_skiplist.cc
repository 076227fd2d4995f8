#include "store/zset_skiplist.h"
