function formatDuration(seconds) {
  const minutes = Math.floor(seconds / 60);
  if (minutes > 60) {
    return `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
  }
  return `${minutes}m`;
}

module.exports = { formatDuration };
