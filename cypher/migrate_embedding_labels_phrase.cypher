// Migration of a store made before the per-dimension indexes: label up to $limit phrases that have an
// embedding of the old indexes' single dimension ($dimension) with $label; run until it returns 0.
MATCH (n:Phrase)
WHERE size(n.embedding) = $dimension AND NOT $label IN labels(n)
WITH n LIMIT $limit
SET n:$($label)
RETURN count(n) AS labelled
