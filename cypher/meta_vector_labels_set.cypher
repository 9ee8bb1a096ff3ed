// Move the namespace's vector-label state forward (unlabelled -> labelling -> labelled, schema.py):
// never back, and a namespace already labelled (or made before the property existed) stays so. Setting
// it takes the metadata node's write lock, as every writer's meta_bump_version does: a write that
// committed before it was written unlabelled (the labelling batches that follow label it), one after it
// labels its own nodes.
MATCH (m:HippoRAGMeta {namespace: $namespace})
SET m.vector_labels = CASE
    WHEN coalesce(m.vector_labels, 'labelled') = 'labelled' THEN m.vector_labels
    ELSE $vector_labels
  END
RETURN coalesce(m.vector_labels, 'labelled') AS vector_labels
