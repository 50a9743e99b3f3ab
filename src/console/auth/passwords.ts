// Password hashes for console users: scrypt (node:crypto) with a random 16-byte salt, stored as
// `scrypt$<N>$<salt base64>$<hash base64>`; verification in constant time. `tributary console
// --hash-password` prints a hash for a password read from stdin, for the config file.

import { randomBytes, scrypt as scryptCb, timingSafeEqual } from "node:crypto";

const N = 16384;
const KEY_LENGTH = 32;

function scrypt(password: string, salt: Buffer, n: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCb(password, salt, KEY_LENGTH, { N: n, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }, (e, key) =>
      e ? reject(e) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, N);
  return `scrypt$${N}$${salt.toString("base64")}$${key.toString("base64")}`;
}

/** Whether `stored` looks like a hash this module makes. */
export function isPasswordHash(stored: string): boolean {
  return /^scrypt\$\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/.test(stored);
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (!isPasswordHash(stored)) return false;
  const [, n, salt, hash] = stored.split("$");
  const expected = Buffer.from(hash, "base64");
  const key = await scrypt(password, Buffer.from(salt, "base64"), Number(n));
  return key.length === expected.length && timingSafeEqual(key, expected);
}
