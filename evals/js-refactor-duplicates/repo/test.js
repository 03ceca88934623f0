const assert = require('assert');
const { gross, receipt } = require('./price');

assert.strictEqual(gross(10), 12);
assert.strictEqual(receipt(10), 'net 10 tax 2');
assert.strictEqual(gross(100), 120);
console.log('ok');
