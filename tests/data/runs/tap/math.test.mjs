import test from 'node:test';
import assert from 'node:assert';

test('adds', () => { assert.strictEqual(1 + 2, 3); });
test('waits a little', async () => { await new Promise((r) => setTimeout(r, 120)); });
test('fails on purpose', () => { assert.strictEqual('a', 'b'); });
test('skipped', { skip: 'not on this machine' }, () => {});
test('todo', { todo: 'later' }, () => { throw new Error('not yet'); });
test('group', async (t) => {
  await t.test('inner one', () => {});
  await t.test('inner two', () => {});
});
