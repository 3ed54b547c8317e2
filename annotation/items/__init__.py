"""What an annotator may see of an item, one read for the pages and the API: the item, its document, the spans block, the HTML of its texts."""
