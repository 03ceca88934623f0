def slugify(title):
    """Lowercase `title`, turn every run of characters that are not letters or digits into
    one hyphen, and strip hyphens from both ends: "Hello, World!" -> "hello-world"."""
    raise NotImplementedError
