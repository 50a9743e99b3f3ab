// The server-side assignors of KIP-848: "uniform" balances (floor/ceil with identical subscriptions, no
// member two below a member holding a partition it could take otherwise) and is sticky when members come
// and go; "range" gives each member one contiguous range per topic, the first members one more.

import assert from "node:assert/strict";
import { test } from "node:test";
import type { AssignmentSpec } from "../../../src/server/coordinator/group/consumer-group-assignor.js";
import {
  type Assignment,
  assignmentSize,
  EMPTY_ASSIGNMENT,
  intersects,
} from "../../../src/server/coordinator/group/consumer-group-member.js";
import { rangeAssign } from "../../../src/server/coordinator/group/consumer-group-range-assignor.js";
import { uniformAssign } from "../../../src/server/coordinator/group/consumer-group-uniform-assignor.js";

function spec(
  members: Record<string, { topics: string[]; previous?: Assignment }>,
  topics: Record<string, number>,
): AssignmentSpec {
  return {
    members: new Map(
      Object.entries(members).map(([id, m]) => [
        id,
        { subscribedTopicIds: new Set(m.topics), previousAssignment: m.previous ?? EMPTY_ASSIGNMENT },
      ]),
    ),
    topics: new Map(Object.entries(topics)),
  };
}

function checkComplete(result: Map<string, Assignment>, s: AssignmentSpec): void {
  const all = [...result.values()];
  for (let i = 0; i < all.length; i++)
    for (let j = i + 1; j < all.length; j++)
      assert.ok(!intersects(all[i], all[j]), "partition assigned twice");
  for (const [t, n] of s.topics) {
    const subscribed = [...s.members.values()].some((m) => m.subscribedTopicIds.has(t));
    const assigned = all.reduce((acc, a) => acc + (a.get(t)?.size ?? 0), 0);
    assert.equal(assigned, subscribed ? n : 0, `topic ${t}`);
  }
  for (const [id, a] of result)
    for (const t of a.keys())
      assert.ok(s.members.get(id)!.subscribedTopicIds.has(t), `${id} not subscribed to ${t}`);
}

test("uniform: identical subscriptions give floor or ceil partitions to each member", () => {
  const s = spec(
    { a: { topics: ["x", "y"] }, b: { topics: ["x", "y"] }, c: { topics: ["x", "y"] } },
    { x: 7, y: 3 },
  );
  const r = uniformAssign(s);
  checkComplete(r, s);
  assert.deepEqual([...r.values()].map(assignmentSize).sort(), [3, 3, 4]);
});

test("uniform: sticky — a new member takes only what balance requires", () => {
  const first = uniformAssign(spec({ a: { topics: ["x"] }, b: { topics: ["x"] } }, { x: 8 }));
  const s = spec(
    {
      a: { topics: ["x"], previous: first.get("a") },
      b: { topics: ["x"], previous: first.get("b") },
      c: { topics: ["x"] },
    },
    { x: 8 },
  );
  const second = uniformAssign(s);
  checkComplete(second, s);
  assert.deepEqual([...second.values()].map(assignmentSize).sort(), [2, 3, 3]);
  let kept = 0;
  for (const id of ["a", "b"])
    for (const p of second.get(id)!.get("x") ?? []) if (first.get(id)!.get("x")!.has(p)) kept++;
  assert.equal(kept, 6, "a and b keep every partition they still hold");
});

test("uniform: different subscriptions stay valid and balanced where they overlap", () => {
  const s = spec({ a: { topics: ["x"] }, b: { topics: ["x", "y"] }, c: { topics: ["y"] } }, { x: 4, y: 4 });
  const r = uniformAssign(s);
  checkComplete(r, s);
  const sizes = [...r.values()].map(assignmentSize);
  assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1, `sizes ${sizes}`);
});

test("range: contiguous ranges per topic, the first members get one more", () => {
  const s = spec(
    { b: { topics: ["x", "y"] }, a: { topics: ["x", "y"] }, c: { topics: ["x"] } },
    { x: 8, y: 5 },
  );
  const r = rangeAssign(s);
  checkComplete(r, s);
  const ps = (id: string, t: string) => [...(r.get(id)!.get(t) ?? [])].sort((x, y) => x - y);
  assert.deepEqual(ps("a", "x"), [0, 1, 2]);
  assert.deepEqual(ps("b", "x"), [3, 4, 5]);
  assert.deepEqual(ps("c", "x"), [6, 7]);
  assert.deepEqual(ps("a", "y"), [0, 1, 2]);
  assert.deepEqual(ps("b", "y"), [3, 4]);
  assert.deepEqual(ps("c", "y"), []);
});
