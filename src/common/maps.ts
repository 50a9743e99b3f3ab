// Map helpers: the get-or-create step (Java's computeIfAbsent) that grouping code repeats.

/** The value at `key`, created with `make` and stored first when absent. */
export function getOrCreate<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let v = map.get(key);
  if (v === undefined) {
    v = make();
    map.set(key, v);
  }
  return v;
}
