// Token checks for handshakes and HTTP: constant-time, and over SHA-256 digests so neither the
// comparison's duration nor its early exit on a length mismatch says anything about the token.
import { createHash, timingSafeEqual } from "node:crypto";
import { PROTOCOL_VERSION } from "../../shared/protocol/index.js";

function digest(s: string): Buffer {
  return createHash("sha256").update(s, "utf8").digest();
}

/**
 * The tokens one door accepts: the hub's token everywhere, and on /agent also the agent token
 * (HubOptions.agentToken), which therefore opens nothing else.
 */
export class TokenCheck {
  private readonly expected: Buffer[];

  constructor(token: string | undefined, ...more: (string | undefined)[]) {
    this.expected = token === undefined ? [] : [token, ...more].filter((t): t is string => t !== undefined).map(digest);
  }

  get required(): boolean {
    return this.expected.length > 0;
  }

  /** True when no token is configured, or `presented` is one of them. */
  accepts(presented: unknown): boolean {
    if (this.expected.length === 0) return true;
    // Hashed even when it is not a string, so a wrong type costs the same as a wrong token; each
    // compared, none skipped, so which one matched takes no longer than none.
    const candidate = digest(typeof presented === "string" ? presented : "");
    let match = false;
    for (const e of this.expected) match = timingSafeEqual(candidate, e) || match;
    return match && typeof presented === "string";
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
