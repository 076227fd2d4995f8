#include "store/set_type.h"
