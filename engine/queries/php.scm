; PHP: declarations and imports (use, require, include) for ctxtui's parser.

(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(function_definition name: (name) @name) @definition.function
(method_declaration name: (name) @name) @definition.method

(namespace_use_clause [(qualified_name) (name)] @import) @import.statement
(require_expression (string (string_content) @import)) @import.statement
(require_once_expression (string (string_content) @import)) @import.statement
(include_expression (string (string_content) @import)) @import.statement
(include_once_expression (string (string_content) @import)) @import.statement
