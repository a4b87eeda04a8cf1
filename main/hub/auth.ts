// Token checks for handshakes and HTTP: constant-time, and over SHA-256 digests so neither the
// comparison's duration nor its early exit on a length mismatch says anything about the token.
import { createHash, timingSafeEqual } from "node:crypto";
import { PROTOCOL_VERSION } from "../../shared/protocol/index.js";

function digest(s: string): Buffer {
  return createHash("sha256").update(s, "utf8").digest();
}

export class TokenCheck {
  private readonly expected: Buffer | undefined;

  constructor(token: string | undefined) {
    this.expected = token === undefined ? undefined : digest(token);
  }

  get required(): boolean {
    return this.expected !== undefined;
  }

  /** True when no token is configured, or `presented` is it. */
  accepts(presented: unknown): boolean {
    if (this.expected === undefined) return true;
    // Hashed even when it is not a string, so a wrong type costs the same as a wrong token.
    const candidate = digest(typeof presented === "string" ? presented : "");
    return timingSafeEqual(candidate, this.expected) && typeof presented === "string";
  }

  /** An HTTP Authorization header: `Bearer <token>`. */
  acceptsHeader(header: string | undefined): boolean {
    if (this.expected === undefined) return true;
    const m = /^Bearer[ ]+(.+)$/i.exec(header ?? "");
    return this.accepts(m === null ? undefined : m[1].trim());
  }

  /**
   * Why a socket.io handshake `auth` is refused, or null to let it in. `unauthorized` is checked
   * before `unsupported_protocol`, so a hub never tells a stranger which protocol it speaks.
   */
  refuseHandshake(auth: unknown): "unauthorized" | "unsupported_protocol" | null {
    const a = typeof auth === "object" && auth !== null ? (auth as { protocol?: unknown; token?: unknown }) : {};
    if (!this.accepts(a.token)) return "unauthorized";
    if (a.protocol !== PROTOCOL_VERSION) return "unsupported_protocol";
    return null;
  }
}
