// Lints Cypher with @neo4j-cypher/language-support against a schema made of our graph model
// (labels, relationship types, property keys, parameters: read from a JSON file) plus the procedure
// and function signatures of the package's testData.mockSchema (Neo4j 5/2025 built-ins, GDS, APOC).
//
//   node lint.mjs SCHEMA.json FILE.cypher...   lint files
//   node lint.mjs SCHEMA.json -                lint [{name, text}, ...] read as JSON from stdin
//
// Prints one JSON list: [{name, diagnostics: [{severity, message, line, column}]}]. Severity 1 is an
// error, 2 a warning (deprecations, unknown labels/properties). Exit code 0 unless the input is unusable.
import { readFileSync } from 'node:fs';
import { lintCypherQuery, testData } from '@neo4j-cypher/language-support';

const [schemaPath, ...inputs] = process.argv.slice(2);
if (!schemaPath || inputs.length === 0) {
  console.error('usage: node lint.mjs SCHEMA.json (FILE.cypher... | -)');
  process.exit(2);
}
const ours = JSON.parse(readFileSync(schemaPath, 'utf8'));
const mock = testData.mockSchema;
const dbSchema = {
  procedures: mock.procedures,
  functions: mock.functions,
  databaseNames: mock.databaseNames,
  aliasNames: mock.aliasNames,
  labels: ours.labels,
  relationshipTypes: ours.relationshipTypes,
  propertyKeys: ours.propertyKeys,
  parameters: ours.parameters,
};

const queries =
  inputs[0] === '-'
    ? JSON.parse(readFileSync(0, 'utf8'))
    : inputs.map((path) => ({ name: path, text: readFileSync(path, 'utf8') }));

const report = queries.map(({ name, text }) => {
  const { diagnostics } = lintCypherQuery(text, dbSchema, { consoleCommandsEnabled: false });
  return {
    name,
    diagnostics: diagnostics.map((d) => ({
      severity: d.severity,
      message: d.message,
      line: d.range.start.line + 1,
      column: d.range.start.character + 1,
    })),
  };
});
console.log(JSON.stringify(report, null, 1));
