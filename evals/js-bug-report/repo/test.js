const assert = require('assert');
const { formatDuration } = require('./duration');

assert.strictEqual(formatDuration(59 * 60), '59m');
assert.strictEqual(formatDuration(3600), '1h 0m');
assert.strictEqual(formatDuration(3660), '1h 1m');
console.log('ok');
