/**
 * A binary min-heap whose items know their place in it: `push`, `update` (after the item's key
 * changed), `delete` and `pop` in O(log n), `peek` in O(1). The mempool ranks its senders'
 * packages for eviction with it.
 */

/** An item of an IndexedHeap: the heap keeps its position here (-1 when outside). */
export interface HeapItem {
  heapIndex: number;
}

/** Min-heap of items ordered by `less` (see module comment). */
export class IndexedHeap<T extends HeapItem> {
  private readonly items: T[] = [];

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  /** The smallest item, or undefined when empty. */
  peek(): T | undefined {
    return this.items[0];
  }

  has(item: T): boolean {
    return item.heapIndex >= 0 && this.items[item.heapIndex] === item;
  }

  push(item: T): void {
    item.heapIndex = this.items.length;
    this.items.push(item);
    this.up(item.heapIndex);
  }

  /** Restores the order after `item`'s key changed (pushes it when it is not in the heap). */
  update(item: T): void {
    if (!this.has(item)) return this.push(item);
    this.down(this.up(item.heapIndex));
  }

  delete(item: T): void {
    if (!this.has(item)) return;
    const i = item.heapIndex;
    const last = this.items.pop()!;
    item.heapIndex = -1;
    if (last === item) return;
    this.items[i] = last;
    last.heapIndex = i;
    this.down(this.up(i));
  }

  pop(): T | undefined {
    const top = this.items[0];
    if (top) this.delete(top);
    return top;
  }

  private up(i: number): number {
    const items = this.items;
    const item = items[i];
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(item, items[p])) break;
      items[i] = items[p];
      items[i].heapIndex = i;
      i = p;
    }
    items[i] = item;
    item.heapIndex = i;
    return i;
  }

  private down(i: number): void {
    const items = this.items;
    const n = items.length;
    const item = items[i];
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && this.less(items[r], items[l]) ? r : l;
      if (!this.less(items[c], item)) break;
      items[i] = items[c];
      items[i].heapIndex = i;
      i = c;
    }
    items[i] = item;
    item.heapIndex = i;
  }
}
