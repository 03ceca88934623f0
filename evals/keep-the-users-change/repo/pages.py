def page_count(items, per_page):
    """How many pages `items` fill, `per_page` to a page."""
    return items // per_page + 1
