// Unlinking: remove this namespace's SAME_AS links (to nodes with $label, or all when it is null).
// Only the relationships go; the linked nodes are untouched.
MATCH (:Phrase {namespace: $namespace})-[r:SAME_AS]->(n)
WHERE $label IS NULL OR $label IN labels(n)
DELETE r
RETURN count(*) AS removed
