help units
