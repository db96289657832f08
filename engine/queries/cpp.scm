; C++: declarations and includes for ctxtui's parser. `void K::d() {}` is a method of K
; (@receiver); namespaces are modules.

(function_definition
  declarator: [
    (function_declarator declarator: [(identifier) (field_identifier) (operator_name) (destructor_name)] @name)
    (pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier)] @name))
    (reference_declarator (function_declarator declarator: [(identifier) (field_identifier)] @name))
  ]) @definition.function
(function_definition
  declarator: [
    (function_declarator
      declarator: (qualified_identifier scope: (_) @receiver name: (_) @name))
    (pointer_declarator
      declarator: (function_declarator
        declarator: (qualified_identifier scope: (_) @receiver name: (_) @name)))
    (reference_declarator
      (function_declarator
        declarator: (qualified_identifier scope: (_) @receiver name: (_) @name)))
  ]) @definition.method
(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum
(type_definition declarator: (type_identifier) @name) @definition.type
(alias_declaration name: (type_identifier) @name) @definition.type
(namespace_definition name: (namespace_identifier) @name) @definition.module

(preproc_include path: (string_literal) @import) @import.statement
