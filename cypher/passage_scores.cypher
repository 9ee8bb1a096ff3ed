// Passage scores from phrase PPR scores: score(passage) = sum over its MENTIONS of ppr(phrase) * count.
// $scores = [{id, score}]; returns the best $limit passages (score > 0), each with its $explain_phrases
// largest contributions as {phrase, contribution}.
UNWIND $scores AS s
MATCH (p:Phrase {namespace: $namespace, id: s.id})<-[m:MENTIONS]-(d:Passage)
WHERE d.namespace = $namespace
WITH d, p, s.score * m.count AS contribution
ORDER BY contribution DESC, p.name
WITH d, sum(contribution) AS score, collect({phrase: p.name, contribution: contribution}) AS contributions
WHERE score > 0
RETURN d.id AS passage_id, score, contributions[0..$explain_phrases] AS top_phrases
ORDER BY score DESC, passage_id
LIMIT $limit
