/** The security requirement of every Console API route: a token of the developer console client (docs/auth.md, "Console accounts and sign-in"). */
export const consoleSecurity = [{ DeveloperConsoleFlow: ['console'] }];
