"""How jobs execute: the models the core asks when a job starts and, for stepped models, when jobs end."""
