"""make_jaxpr texts recorded from JAX 0.10.2 by tests/tools/record_sharding_types.py."""
JAX_TEXTS = {'add_conflict': "ShardingTypeError: add got incompatible shardings for broadcasting: ('X', None), ('Y', None).",
 'add_merges_splits': '{ lambda ; a:f32[8@X,4] b:f32[8,4@Y]. let c:f32[8@X,4@Y] = add a b in (c,) }',
 'argmax': '{ lambda ; a:f32[8@X,4]. let\n    b:i32[4] = argmax[axes=(0,) index_dtype=int32] a\n  in (b,) }',
 'broadcast': '{ lambda ; a:f32[8@X]. let\n'
              '    b:f32[8@X,1] = broadcast_in_dim[broadcast_dimensions=(0,)] a\n'
              '    c:f32[8,4] = broadcast_in_dim 1.0:f32[]\n'
              '    d:f32[8@X,4] = mul b c\n'
              '  in (d,) }',
 'concatenate': '{ lambda ; a:f32[8@X,4]. let\n    b:f32[8@X,8] = concatenate[dimension=1] a a\n  in (b,) }',
 'concatenate_split_dim': '{ lambda ; a:f32[8@X,4]. let\n    b:f32[16@X,4] = concatenate[dimension=0] a a\n  in (b,) }',
 'contracting_split_needs_out_sharding': 'ShardingTypeError: Contracting dimensions are sharded and it is ambiguous '
                                         'how the output should be sharded. Please specify the output sharding via the '
                                         "`out_sharding` parameter. Got lhs_contracting_spec=('X',) and "
                                         "rhs_contracting_spec=('X',)",
 'contracting_split_out_sharding': '{ lambda ; a:f32[8@X,4] b:f32[4,8@X]. let\n'
                                   '    c:f32[4@X,4] = dot_general[dimension_numbers=(([1], [0]), ([], []))] b a\n'
                                   '  in (c,) }',
 'convert': '{ lambda ; a:f32[8@X,4]. let\n'
            '    b:i32[8@X,4] = convert_element_type[new_dtype=int32 weak_type=False] a\n'
            '  in (b,) }',
 'cumsum_split_axis': 'ShardingTypeError: Input should be unsharded over the axis being reduced. Got input '
                      'type=float32[8@X,4] and axis=0',
 'dot_batch': '{ lambda ; a:f32[4@X,2,3] b:f32[4@X,3,2]. let\n'
              '    c:f32[4@X,2,2] = dot_general[\n'
              '      dimension_numbers=(([2], [1]), ([0], [0]))\n'
              '      preferred_element_type=float32\n'
              '    ] a b\n'
              '  in (c,) }',
 'dot_batch_conflict': 'ShardingTypeError: dot_general requires lhs batch dimensions and rhs batch dimensions to have '
                       "the consistent sharding, got ('X',) and ('Y',).",
 'dot_illegal_result': 'ShardingTypeError: dot_general operation with inputs: f32[4@X,4], f32[4,4@X] produces an '
                       'illegally sharded result: f32[4@X,4@X]',
 'einsum_out_sharding': '{ lambda ; a:f32[8@X,4] b:f32[4,8@X]. let\n'
                        '    c:f32[4,4] = dot_general[\n'
                        '      dimension_numbers=(([1], [0]), ([], []))\n'
                        '      preferred_element_type=float32\n'
                        '    ] b a\n'
                        '  in (c,) }',
 'expand_dims': '{ lambda ; a:f32[8@X,4]. let\n'
                '    b:f32[1,8@X,4] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a\n'
                '  in (b,) }',
 'grad': '{ lambda ; a:f32[8@X,4]. let\n'
         '    b:f32[8@X,4] = mul a a\n'
         '    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b\n'
         '    c:f32[] = reshard 1.0:f32[]\n'
         '    d:f32[8@X,4] = broadcast_in_dim c\n'
         '    e:f32[8@X,4] = mul a d\n'
         '    f:f32[8@X,4] = mul d a\n'
         '    g:f32[8@X,4] = add_any e f\n'
         '  in (g,) }',
 'grad_mlp': '{ lambda ; a:f32[4,6@Y] b:f32[8@X,4]. let\n'
             '    c:f32[8@X,6@Y] = dot_general[\n'
             '      dimension_numbers=(([1], [0]), ([], []))\n'
             '      preferred_element_type=float32\n'
             '    ] b a\n'
             '    d:f32[8@X,6@Y] = tanh c\n'
             '    e:f32[] = reshard 1.0:f32[]\n'
             '    f:f32[8@X,6@Y] = sub e d\n'
             '    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d\n'
             '    g:f32[] = reshard 1.0:f32[]\n'
             '    h:f32[8@X,6@Y] = broadcast_in_dim g\n'
             '    i:f32[8@X,6@Y] = mul h f\n'
             '    j:f32[8@X,6@Y] = mul i d\n'
             '    k:f32[8@X,6@Y] = add_any i j\n'
             '    l:f32[6@Y,4] = dot_general[\n'
             '      dimension_numbers=(([0], [0]), ([], []))\n'
             '      preferred_element_type=float32\n'
             '    ] k b\n'
             '    m:f32[4,6@Y] = transpose[permutation=(1, 0)] l\n'
             '  in (m,) }',
 'grad_no_mesh_set': '{ lambda ; a:f32[8@X,4]. let\n'
                     '    b:f32[8@X,4] = mul a a\n'
                     '    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b\n'
                     '    c:f32[] = reshard 1.0:f32[]\n'
                     '    d:f32[8@X,4] = broadcast_in_dim c\n'
                     '    e:f32[8@X,4] = mul a d\n'
                     '    f:f32[8@X,4] = mul d a\n'
                     '    g:f32[8@X,4] = add_any e f\n'
                     '  in (g,) }',
 'grad_wsc_auto': 'AssertionError: `with_sharding_constraint` acts as an assert when all axes of mesh are of type '
                  "`Explicit`. The array sharding: P(None, None) did not match the sharding provided: P('X', None). "
                  'Please use `jax.sharding.reshard` to shard your input to the sharding you want.',
 'integer_pow': '{ lambda ; a:f32[8@X,4]. let b:f32[8@X,4] = integer_pow[y=2] a in (b,) }',
 'jit': '{ lambda ; a:f32[8@X,4]. let\n'
        '    b:f32[8@X,4] = jit[\n'
        '      name=<lambda>\n'
        "      ctx_mesh=Mesh('X': 2, 'Y': 2, axis_types=(Explicit, Explicit))\n"
        '      jaxpr={ lambda ; a:f32[8@X,4]. let\n'
        '          c:f32[8@X,4] = tanh a\n'
        '          b:f32[8@X,4] = add c 1.0:f32[]\n'
        '        in (b,) }\n'
        '    ] a\n'
        '  in (b,) }',
 'jit_of_grad': '{ lambda ; a:f32[8@X,4]. let\n'
                '    b:f32[8@X,4] = jit[\n'
                '      name=<lambda>\n'
                "      ctx_mesh=Mesh('X': 2, 'Y': 2, axis_types=(Explicit, Explicit))\n"
                '      jaxpr={ lambda ; a:f32[8@X,4]. let\n'
                '          c:f32[8@X,4] = mul a 2.0:f32[]\n'
                '          d:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c\n'
                '          e:f32[] = reshard 1.0:f32[]\n'
                '          f:f32[8@X,4] = broadcast_in_dim e\n'
                '          b:f32[8@X,4] = mul f 2.0:f32[]\n'
                '        in (b,) }\n'
                '    ] a\n'
                '  in (b,) }',
 'main': '{ lambda ; a:f32[8@X,4] b:f32[4,6@Y]. let\n'
         '    c:f32[8@X,6@Y] = dot_general[\n'
         '      dimension_numbers=(([1], [0]), ([], []))\n'
         '      preferred_element_type=float32\n'
         '    ] a b\n'
         '    d:f32[8@X,6@Y] = sin c\n'
         '    e:f32[6@Y] = reduce_sum[axes=(0,) out_sharding=None] d\n'
         '    f:f32[6] = reshard e\n'
         '  in (f,) }',
 'reduce_max': '{ lambda ; a:f32[8@X,4]. let b:f32[8@X] = reduce_max[axes=(1,)] a in (b,) }',
 'reshape_merge': '{ lambda ; a:f32[8@X,4]. let\n'
                  '    b:f32[32@X] = reshape[dimensions=None new_sizes=(32,) sharding=None] a\n'
                  '  in (b,) }',
 'reshape_refused': 'ShardingTypeError: This reshape is not supported. Please specify the sharding of the output via '
                    'the `out_sharding` argument of jax.lax.reshape. Got operand type: float32[8@X,4], new sizes: (2, '
                    '16)',
 'reshape_refused_minor': 'ShardingTypeError: This reshape is not supported. Please specify the sharding of the output '
                          'via the `out_sharding` argument of jax.lax.reshape. Got operand type: float32[8,4@Y], new '
                          'sizes: (4, 8)',
 'reshape_split': '{ lambda ; a:f32[8@X,4]. let\n'
                  '    b:f32[8@X,2,2] = reshape[dimensions=None new_sizes=(8, 2, 2) sharding=None] a\n'
                  '  in (b,) }',
 'reshard': '{ lambda ; a:f32[8@X,4]. let b:f32[8,4@X] = reshard a in (b,) }',
 'reshard_bad_axis': "ValueError: Resource axis: Z of P(None, 'Z') is not found in mesh: ('X', 'Y').",
 'reshard_named': '{ lambda ; a:f32[8@X,4]. let b:f32[8,4@Y] = reshard a in (b,) }',
 'reshard_unsharded': '{ lambda ; a:f32[8,4]. let b:f32[8,4@Y] = reshard a in (b,) }',
 'select_n': '{ lambda ; a:f32[8@X,4]. let\n'
             '    b:bool[8@X,4] = gt a 1.0:f32[]\n'
             '    c:f32[8@X,4] = select_n b a a\n'
             '  in (c,) }',
 'shard_map_infer': '{ lambda ; a:f32[8@X,4]. let\n'
                    '    b:f32[8@X,4] = shard_map[\n'
                    '      check_vma=True\n'
                    "      in_specs=(P('X', None),)\n"
                    '      jaxpr={ lambda ; c:f32[4,4]{V:X}. let\n'
                    "          d:f32[]{V:X} = pvary[axes=('X',)] 2.0:f32[]\n"
                    '          e:f32[4,4]{V:X} = mul c d\n'
                    '        in (e,) }\n'
                    "      mesh=AbstractMesh('X': 2, 'Y': 2, axis_types=(Explicit, Explicit), device_kind=cpu, "
                    'num_cores=None, platform=cpu)\n'
                    "      newly_manual_axes=frozenset({'X', 'Y'})\n"
                    "      out_specs=(P('X', None),)\n"
                    '    ] a\n'
                    '  in (b,) }',
 'slice': '{ lambda ; a:f32[8@X,4]. let\n'
          '    b:f32[4@X,3] = slice[limit_indices=(6, 4) start_indices=(2, 1) strides=None] a\n'
          '  in (b,) }',
 'slice_indivisible': 'ShardingTypeError: slicing on sharded dims where out dim (3) is not divisible by mesh axes (2) '
                      'with spec (X) is not implemented. Got input type=f32[8@X,4] and output shape=(3, 4)',
 'sort_split_dim': 'ShardingTypeError: Arguments to sort must be unsharded over the sorting dimension. Got arg '
                   "sharding=NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 2, axis_types=(Explicit, Explicit), "
                   "device_kind=cpu, num_cores=None, platform=cpu), spec=P('X', None)) and sorting dimension=0",
 'squeeze': '{ lambda ; a:f32[8@X,4]. let\n'
            '    b:f32[8@X,1,4] = reshape[dimensions=None new_sizes=(8, 1, 4) sharding=None] a\n'
            '    c:f32[8@X,4] = squeeze[dimensions=(1,)] b\n'
            '  in (c,) }',
 'transpose': '{ lambda ; a:f32[8@X,4]. let\n    b:f32[4,8@X] = transpose[permutation=(1, 0)] a\n  in (b,) }',
 'typeof': '{ lambda ; a:f32[8@X,4]. let\n'
           '    _:f32[8@X,4] = mul a 2.0:f32[]\n'
           '    _:f32[4,8@X] = transpose[permutation=(1, 0)] a\n'
           '  in (a,) }',
 'typeof_array': 'float32[8@X,4]',
 'typeof_strings': 'float32[8@X,4] float32[8@X,4] float32[4,8@X] | float32[8@X]',
 'vmap': '{ lambda ; a:f32[8@X,4]. let b:f32[8@X,4] = mul a 2.0:f32[] in (b,) }',
 'vmap_dot_out_sharding': '{ lambda ; a:f32[4@X,2,3] b:f32[4@X,3,2]. let\n'
                          '    c:f32[4@X,2,2@Y] = dot_general[dimension_numbers=(([2], [1]), ([0], [0]))] a\n'
                          '      b\n'
                          '  in (c,) }',
 'vmap_grad': '{ lambda ; a:f32[8@X,4]. let\n'
              '    b:f32[8@X,4] = sin a\n'
              '    c:f32[8@X,4] = cos a\n'
              '    _:f32[8@X] = reduce_sum[axes=(np.int64(1),) out_sharding=None] b\n'
              '    d:f32[] = reshard 1.0:f32[]\n'
              '    e:f32[4] = broadcast_in_dim d\n'
              '    f:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] e\n'
              '    g:f32[8@X,4] = mul f c\n'
              '  in (g,) }',
 'vmap_in_axes_1': '{ lambda ; a:f32[8@X,4]. let\n'
                   '    b:f32[4] = reduce_sum[axes=(np.int64(0),) out_sharding=None] a\n'
                   '  in (b,) }',
 'vmap_reshard': '{ lambda ; a:f32[8@X,4]. let b:f32[8@X,4@Y] = reshard a in (b,) }',
 'vmap_typeof': '{ lambda ; a:f32[8@X,4]. let\n'
                '    b:f32[8@X,4] = mul a 2.0:f32[]\n'
                '    c:f32[4,8@X] = transpose[permutation=(1, 0)] b\n'
                '  in (c,) }',
 'where': '{ lambda ; a:f32[8@X,4]. let\n'
          '    b:bool[8@X,4] = gt a 1.0:f32[]\n'
          '    c:f32[8@X,4] = jit[\n'
          '      name=_where\n'
          "      ctx_mesh=Mesh('X': 2, 'Y': 2, axis_types=(Explicit, Explicit))\n"
          '      jaxpr={ lambda ; b:bool[8@X,4] a:f32[8@X,4] d:f32[]. let\n'
          '          e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d\n'
          '          f:f32[8@X,4] = broadcast_in_dim e\n'
          '          c:f32[8@X,4] = select_n b f a\n'
          '        in (c,) }\n'
          '    ] b a 0.0:f32[]\n'
          '  in (c,) }',
 'wsc_auto': 'AssertionError: `with_sharding_constraint` acts as an assert when all axes of mesh are of type '
             "`Explicit`. The array sharding: P(None, None) did not match the sharding provided: P('X', None). Please "
             'use `jax.sharding.reshard` to shard your input to the sharding you want.',
 'wsc_explicit_assert': 'AssertionError: `with_sharding_constraint` acts as an assert when all axes of mesh are of '
                        "type `Explicit`. The array sharding: P('X', None) did not match the sharding provided: "
                        "P(None, 'Y'). Please use `jax.sharding.reshard` to shard your input to the sharding you want.",
 'zeros_like': '{ lambda ; a:f32[8@X,4]. let b:f32[8@X,4] = broadcast_in_dim 0.0:f32[] in (b,) }'}
