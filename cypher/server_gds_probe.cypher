// Can GDS procedures run? A GDS procedure left out of dbms.security.procedures.unrestricted fails with
// Neo.ClientError.Procedure.ProcedureRegistrationFailed ("... is unavailable because it is sandboxed").
CALL gds.graph.list() YIELD graphName
RETURN count(graphName) AS graphs
