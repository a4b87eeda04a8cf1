import { describe, expect, it, vi } from "vitest";
import { QuitGuard } from "../../../main/app/quit-guard.js";

describe("QuitGuard", () => {
  it("holds the first quit until shutdown is done, then quits once and lets that quit through", async () => {
    let finish!: () => void;
    const shutdown = vi.fn(() => new Promise<void>((r) => (finish = r)));
    const requestQuit = vi.fn();
    const guard = new QuitGuard({ shutdown, requestQuit });
    expect(guard.onQuitRequested()).toBe("defer");
    expect(guard.onQuitRequested()).toBe("defer"); // a second Cmd+Q while closing
    expect(shutdown).toHaveBeenCalledTimes(1);
    expect(requestQuit).not.toHaveBeenCalled();
    finish();
    await vi.waitFor(() => expect(requestQuit).toHaveBeenCalledTimes(1));
    expect(guard.closed).toBe(true);
    expect(guard.onQuitRequested()).toBe("allow");
  });

  it("quits anyway when shutdown fails or hangs, and says so", async () => {
    const log = vi.fn();
    const failing = new QuitGuard({ shutdown: () => Promise.reject(new Error("disk gone")), requestQuit: vi.fn(), log });
    failing.onQuitRequested();
    await vi.waitFor(() => expect(failing.closed).toBe(true));
    expect(log).toHaveBeenCalledWith("semscope: shutdown failed: disk gone");

    const requestQuit = vi.fn();
    const hanging = new QuitGuard({ shutdown: () => new Promise(() => undefined), requestQuit, timeoutMs: 20, log });
    hanging.onQuitRequested();
    await vi.waitFor(() => expect(requestQuit).toHaveBeenCalled());
    expect(log).toHaveBeenCalledWith("semscope: shutdown took over 20 ms; quitting anyway");
  });
});
