"""The annotator's pages: instructions, practice screens, one item a page, the crowd entry, the signed cookies."""
