import { Item } from "./item";
import * as fs from "fs";

export interface Store {
  get(id: string): Item | undefined;
  put(item: Item): void;
}

export type ItemId = string;

export enum Mode {
  Read,
  Write,
}

namespace Util {
  export function clamp(x: number): number {
    return Math.max(0, x);
  }
}

// An in-memory store.
export class MemoryStore implements Store {
  private items = new Map<string, Item>();

  get(id: string): Item | undefined {
    return this.items.get(id);
  }

  put(item: Item): void {
    this.items.set(item.id, item);
  }
}

export const makeStore = (): Store => new MemoryStore();
