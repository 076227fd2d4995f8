#include "store/list_type.h"
