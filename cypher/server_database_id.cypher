// The database's id: another id at the same URI after an outage means another database (restored,
// recreated), whose graph versions say nothing about what this process holds in memory.
CALL db.info() YIELD id
RETURN id
