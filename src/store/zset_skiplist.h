// (Being written: the sorted set's ordered index.)
#pragma once
