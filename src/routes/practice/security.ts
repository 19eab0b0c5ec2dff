/** The OpenAPI security requirement of Practice API routes (docs/decisions/0014-practice-workspace.md, "Scopes"). */

/** The security requirement of a Practice API route needing `scope`. */
export const practiceSecurity = (scope: string) => [{ PracticeWorkspaceFlow: [scope] }];
