"""Small helpers every floor may use: text normalisation, SQLite batching, model names. No package imports."""
