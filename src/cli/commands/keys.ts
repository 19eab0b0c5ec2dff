/** `carebook keys rotate | rewrap`: access-token signing keys and their encryption at rest. */
import type { Command } from 'commander';
import { keyEncryptionOf, kekId, withKeyEncryption } from '../../auth/key-encryption.js';
import { KeyStore } from '../../auth/signing-keys.js';
import { print, remote, UsageError, withDb, type ConfigSource } from '../command-support.js';

/** Adds `keys rotate` and `keys rewrap` to `program`; both work on the database directly, never through `--url`. */
export function addKeyCommands(program: Command, config: ConfigSource): void {
  const keys = program.command('keys').description('access-token signing keys and their encryption at rest');
  keys
    .command('rotate')
    .description('create a new signing key; the old one keeps verifying tokens for an hour, then leaves the JWKS')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      if (remote(cmd).url) {
        throw new UsageError('keys rotate works on the database directly (DATABASE_URL, or the stopped embedded database), not through --url');
      }
      const cfg = await withKeyEncryption(config());
      const { kid } = await withDb(cfg, (db) => new KeyStore(db, cfg.appEnv, keyEncryptionOf(cfg)).rotate());
      print(!!opts.json, { kid, env: cfg.appEnv }, `new signing key ${kid} (${cfg.appEnv}); running services sign with it within a minute`);
    });
  keys
    .command('rewrap')
    .description('re-encrypt every signing key under KEY_ENCRYPTION_KEY (give the old key as KEY_ENCRYPTION_KEY_PREVIOUS); see docs/operator-guide.md')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      if (remote(cmd).url) {
        throw new UsageError('keys rewrap works on the database directly (DATABASE_URL, or the stopped embedded database), not through --url');
      }
      const cfg = await withKeyEncryption(config());
      const count = await withDb(cfg, (db) => new KeyStore(db, cfg.appEnv, keyEncryptionOf(cfg)).rewrap());
      const id = kekId(cfg.keyEncryptionKey!);
      print(!!opts.json, { rewrapped: count, key_encryption_key_id: id, env: cfg.appEnv }, `${count} signing key(s) of ${cfg.appEnv} re-encrypted under key-encryption key ${id}`);
    });
}
