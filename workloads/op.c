/* op.c -- placeholder; being written. */
#include "op.h"
