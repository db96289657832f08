; Markdown: heading sections for ctxtui's parser. The grammar nests sections by heading
; level, so depth and qualified names ("Install > Linux") follow from the tree.

(section . (atx_heading heading_content: (_) @name)) @definition.section
