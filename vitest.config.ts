import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Explicit include: browser specs and benchmarks are never picked up by accident.
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
