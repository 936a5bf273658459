"""Power states, energy accounting, and the power policies that switch nodes off and on."""
