// Uniqueness constraints (idempotent). Ids are unique per namespace; each constraint also gives the
// (namespace, id) index every MERGE uses.
CREATE CONSTRAINT hipporag_passage_key IF NOT EXISTS
FOR (n:Passage) REQUIRE (n.namespace, n.id) IS UNIQUE;

CREATE CONSTRAINT hipporag_phrase_key IF NOT EXISTS
FOR (n:Phrase) REQUIRE (n.namespace, n.id) IS UNIQUE;

CREATE CONSTRAINT hipporag_fact_key IF NOT EXISTS
FOR (n:Fact) REQUIRE (n.namespace, n.id) IS UNIQUE;

CREATE CONSTRAINT hipporag_meta_namespace IF NOT EXISTS
FOR (n:HippoRAGMeta) REQUIRE n.namespace IS UNIQUE;
