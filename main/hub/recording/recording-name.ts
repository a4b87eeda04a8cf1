// A recording's name as a file name safe on every OS (saved ranges).
export function safeName(name: string): string {
  const cleaned = name
    .trim()
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^[.-]+/, "")
    .replace(/-+$/, "")
    .slice(0, 80);
  if (cleaned === "") throw new RangeError("a recording needs a name (letters, digits, . _ and -)");
  return cleaned;
}
