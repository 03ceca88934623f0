function gross(amount) {
  return amount + Math.round(amount * 0.2 * 100) / 100;
}

function receipt(amount) {
  const tax = Math.round(amount * 0.2 * 100) / 100;
  return `net ${amount} tax ${tax}`;
}

module.exports = { gross, receipt };
