import { randomBytes } from "node:crypto";

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/** The largest multiple of 62 that fits a byte: bytes from here up are drawn again (no bias). */
const UNBIASED_BELOW = 248;

/**
 * A random id of letters and digits only (22 characters: 130 bits), for ids an administrator types
 * or pastes into commands: base64url's `-` and `_` would let one id in 64 start with `-` and read as an
 * option (`imaging clients show -fa7c…`).
 */
export function alphanumericId(length = 22): string {
  let id = "";
  while (id.length < length) {
    for (const byte of randomBytes(length - id.length + 4)) {
      if (byte < UNBIASED_BELOW && id.length < length) id += ALPHANUMERIC[byte % ALPHANUMERIC.length];
    }
  }
  return id;
}
