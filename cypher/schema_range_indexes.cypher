// Range indexes for namespace scans, exact phrase look-up and relation refresh (idempotent).
CREATE INDEX hipporag_passage_namespace IF NOT EXISTS FOR (n:Passage) ON (n.namespace);

CREATE INDEX hipporag_phrase_namespace IF NOT EXISTS FOR (n:Phrase) ON (n.namespace);

CREATE INDEX hipporag_fact_namespace IF NOT EXISTS FOR (n:Fact) ON (n.namespace);

CREATE INDEX hipporag_phrase_name IF NOT EXISTS FOR (n:Phrase) ON (n.namespace, n.name);

CREATE INDEX hipporag_fact_pair IF NOT EXISTS FOR (n:Fact) ON (n.namespace, n.subject_id, n.object_id);
