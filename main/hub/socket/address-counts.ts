// How many of something (connections, dashboards, agents waiting for hello) each remote address
// holds now, for the caps per address. An address holding none takes no memory.
export class AddressCounts {
  private readonly counts = new Map<string, number>();

  of(address: string): number {
    return this.counts.get(address) ?? 0;
  }

  add(address: string): void {
    this.counts.set(address, this.of(address) + 1);
  }

  remove(address: string): void {
    const n = this.of(address) - 1;
    if (n <= 0) this.counts.delete(address);
    else this.counts.set(address, n);
  }
}
