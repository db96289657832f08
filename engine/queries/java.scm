; Java: declarations and imports for ctxtui's parser.

(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method

(import_declaration (scoped_identifier) @import (asterisk) @import.wildcard) @import.statement
(import_declaration (scoped_identifier) @import .) @import.statement
