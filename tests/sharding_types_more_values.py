"""make_jaxpr texts recorded from JAX 0.10.2 by tests/tools/record_sharding_types.py."""
JAX_TEXTS = {'arange_out_sharding': '{ lambda ; . let\n'
                        '    a:f32[8@X] = iota[\n'
                        '      dimension=0\n'
                        '      dtype=float32\n'
                        '      shape=(8,)\n'
                        "      sharding=NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 2, axis_types=(Explicit, "
                        "Explicit), device_kind=cpu, num_cores=None, platform=cpu), spec=P('X',))\n"
                        '    ] \n'
                        '  in (a,) }',
 'at_add': '{ lambda ; a:f32[4,6@Y] b:i32[3]. let\n'
           '    c:bool[3] = lt b 0:i32[]\n'
           '    d:i32[3] = add b 4:i32[]\n'
           '    e:i32[3] = select_n c b d\n'
           '    f:i32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e\n'
           '    g:f32[3,6@Y] = broadcast_in_dim 1.0:f32[]\n'
           '    h:f32[4,6@Y] = scatter-add[\n'
           '      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), '
           'scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())\n'
           '      indices_are_sorted=False\n'
           '      mode=GatherScatterMode.FILL_OR_DROP\n'
           '      unique_indices=False\n'
           '      update_consts=()\n'
           '      update_jaxpr={ lambda ; i:f32[] j:f32[]. let k:f32[] = add i j in (k,) }\n'
           '    ] a f g\n'
           '  in (h,) }',
 'at_set_columns': '{ lambda ; a:f32[8@X,4] b:i32[3]. let\n'
                   '    c:bool[3] = lt b 0:i32[]\n'
                   '    d:i32[3] = add b 4:i32[]\n'
                   '    e:i32[3] = select_n c b d\n'
                   '    f:i32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e\n'
                   '    g:f32[8@X,3] = broadcast_in_dim 0.0:f32[]\n'
                   '    h:f32[8@X,4] = scatter[\n'
                   '      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(0,), '
                   'inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,), operand_batching_dims=(), '
                   'scatter_indices_batching_dims=())\n'
                   '      indices_are_sorted=False\n'
                   '      mode=GatherScatterMode.FILL_OR_DROP\n'
                   '      unique_indices=False\n'
                   '      update_consts=()\n'
                   '      update_jaxpr=None\n'
                   '    ] a f g\n'
                   '  in (h,) }',
 'at_set_split_dim': 'ShardingTypeError: Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec '
                     'for the scatter update as out sharding could not be resolved unambiguously (or would require '
                     'collectives on inputs). Got operand=ShapedArray(float32[8@X,4]), '
                     'indices=ShapedArray(int32[3,1]), updates=ShapedArray(float32[3,4])',
 'cholesky': 'ShardingTypeError: select `which` must be scalar or have the same sharding as cases, got `which` '
             "sharding NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 2, axis_types=(Explicit, Explicit), "
             'device_kind=cpu, num_cores=None, platform=cpu), spec=P(None, None, None)) but case sharding '
             "NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 2, axis_types=(Explicit, Explicit), device_kind=cpu, "
             "num_cores=None, platform=cpu), spec=P('X', None, None)).",
 'conv_batch_split': '{ lambda a:f32[2,3,3,3]; b:f32[4@X,3,6,6]. let\n'
                     '    c:f32[4@X,2,6,6] = conv_general_dilated[\n'
                     '      batch_group_count=1\n'
                     '      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), '
                     'out_spec=(0, 1, 2, 3))\n'
                     '      feature_group_count=1\n'
                     '      lhs_dilation=(1, 1)\n'
                     '      out_sharding=None\n'
                     '      padding=((1, 1), (1, 1))\n'
                     '      precision=None\n'
                     '      preferred_element_type=None\n'
                     '      rhs_dilation=(1, 1)\n'
                     '      window_strides=(1, 1)\n'
                     '    ] b a\n'
                     '  in (c,) }',
 'dot_out_sharding': '{ lambda ; a:f32[8@X,4] b:f32[4,6@Y]. let\n'
                     '    c:f32[8@X,6] = dot_general[\n'
                     '      dimension_numbers=(([1], [0]), ([], []))\n'
                     '      preferred_element_type=float32\n'
                     '    ] a b\n'
                     '  in (c,) }',
 'dynamic_slice': '{ lambda ; a:f32[8@X,4] b:i32[]. let\n'
                  '    c:bool[] = lt b 0:i32[]\n'
                  '    d:i32[] = add b 8:i32[]\n'
                  '    e:i32[] = select_n c b d\n'
                  '    f:f32[4@X,2] = dynamic_slice[slice_sizes=(4, 2)] a e 0:i32[]\n'
                  '  in (f,) }',
 'dynamic_slice_indivisible': 'ShardingTypeError: dynamic_slice on sharded dims where out dim (3) is not divisible by '
                              'mesh axes (2) with spec (X) is not implemented. Got input type=f32[8@X,4] and output '
                              'shape=(3, 2)',
 'dynamic_update_slice': '{ lambda ; a:f32[8@X,4]. let\n'
                         '    b:f32[4@X,4] = slice[limit_indices=(4, 4) start_indices=(0, 0) strides=None] a\n'
                         '    c:f32[4@X,4] = mul b 2.0:f32[]\n'
                         '    d:f32[8@X,4] = dynamic_update_slice a c 2:i32[] 0:i32[]\n'
                         '  in (d,) }',
 'dynamic_update_slice_mismatch': 'ShardingTypeError: dynamic_update_slice operand sharding must be equal to update '
                                  "sharding, got operand sharding float32[8@X,4]({Explicit: ('X', 'Y')}) and update "
                                  "sharding float32[4,4@Y]({Explicit: ('X', 'Y')}).",
 'eigh': 'float32[4@X,3] float32[4@X,3,3]',
 'index_array': '{ lambda ; a:f32[4,6@Y] b:i32[3]. let\n'
                '    c:bool[3] = lt b 0:i32[]\n'
                '    d:i32[3] = add b 4:i32[]\n'
                '    e:i32[3] = select_n c b d\n'
                '    f:i32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e\n'
                '    g:f32[3,6@Y] = gather[\n'
                '      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), '
                'start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())\n'
                '      fill_value=None\n'
                '      indices_are_sorted=False\n'
                '      mode=GatherScatterMode.PROMISE_IN_BOUNDS\n'
                '      slice_sizes=(1, 6)\n'
                '      unique_indices=False\n'
                '    ] a f\n'
                '  in (g,) }',
 'index_array_columns': '{ lambda ; a:f32[8@X,4] b:i32[3]. let\n'
                        '    c:bool[3] = lt b 0:i32[]\n'
                        '    d:i32[3] = add b 4:i32[]\n'
                        '    e:i32[3] = select_n c b d\n'
                        '    f:i32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e\n'
                        '    g:f32[8@X,3] = gather[\n'
                        '      dimension_numbers=GatherDimensionNumbers(offset_dims=(0,), collapsed_slice_dims=(1,), '
                        'start_index_map=(1,), operand_batching_dims=(), start_indices_batching_dims=())\n'
                        '      fill_value=None\n'
                        '      indices_are_sorted=False\n'
                        '      mode=GatherScatterMode.PROMISE_IN_BOUNDS\n'
                        '      slice_sizes=(8, 1)\n'
                        '      unique_indices=False\n'
                        '    ] a f\n'
                        '  in (g,) }',
 'index_array_split_dim': 'ShardingTypeError: Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for '
                          'the gather indexing as out sharding could not be resolved unambiguously (or would require '
                          'collectives on inputs). Got operand=ShapedArray(float32[8@X,4]), '
                          'indices=ShapedArray(int32[3,1])',
 'index_int_split_dim': 'ShardingTypeError: slicing on sharded dims where out dim (1) is not divisible by mesh axes '
                        '(2) with spec (X) is not implemented. Got input type=f32[8@X,4] and output shape=(1, 4)',
 'index_int_unsplit_dim': '{ lambda ; a:f32[8@X,4]. let\n'
                          '    b:f32[8@X,1] = slice[limit_indices=(8, 3) start_indices=(0, 2) strides=None] a\n'
                          '    c:f32[8@X] = squeeze[dimensions=(1,)] b\n'
                          '  in (c,) }',
 'index_split_ids': 'ShardingTypeError: Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the '
                    'gather indexing as out sharding could not be resolved unambiguously (or would require collectives '
                    'on inputs). Got operand=ShapedArray(float32[4,6@Y]), indices=ShapedArray(int32[4@Y,1])',
 'lax_reshape_out_sharding': '{ lambda ; a:f32[8@X,4]. let\n'
                             '    b:f32[4,8@Y] = reshape[\n'
                             '      dimensions=None\n'
                             '      new_sizes=(4, 8)\n'
                             "      sharding=NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 2, axis_types=(Explicit, "
                             "Explicit), device_kind=cpu, num_cores=None, platform=cpu), spec=P(None, 'Y'))\n"
                             '    ] a\n'
                             '  in (b,) }',
 'matmul_out_sharding': '{ lambda ; a:f32[8@X,4] b:f32[4,6@Y]. let\n'
                        '    c:f32[8,6@Y] = dot_general[\n'
                        '      dimension_numbers=(([1], [0]), ([], []))\n'
                        '      preferred_element_type=float32\n'
                        '    ] a b\n'
                        '  in (c,) }',
 'qr': 'float32[4@X,3,3] float32[4@X,3,3]',
 'reshape_out_sharding': '{ lambda ; a:f32[8@X,4]. let\n'
                         '    b:f32[2@X,16] = reshape[\n'
                         '      dimensions=None\n'
                         '      new_sizes=(2, 16)\n'
                         "      sharding=NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 2, axis_types=(Explicit, "
                         "Explicit), device_kind=cpu, num_cores=None, platform=cpu), spec=P('X', None))\n"
                         '    ] a\n'
                         '  in (b,) }',
 'select_cases_conflict': 'ShardingTypeError: select cases must have the same shardings, got '
                          "[NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 2, axis_types=(Explicit, Explicit), "
                          "device_kind=cpu, num_cores=None, platform=cpu), spec=P(None, 'Y')), "
                          "NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 2, axis_types=(Explicit, Explicit), "
                          "device_kind=cpu, num_cores=None, platform=cpu), spec=P('X', None))].",
 'select_which_conflict': 'ShardingTypeError: select `which` must be scalar or have the same sharding as cases, got '
                          "`which` sharding NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 2, axis_types=(Explicit, "
                          "Explicit), device_kind=cpu, num_cores=None, platform=cpu), spec=P('X', None)) but case "
                          "sharding NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 2, axis_types=(Explicit, Explicit), "
                          "device_kind=cpu, num_cores=None, platform=cpu), spec=P(None, 'Y')).",
 'shape_dtype_struct_eval_shape': "P('X', None)",
 'shape_dtype_struct_make_jaxpr': '{ lambda ; a:f32[8@X,4]. let\n'
                                  '    b:f32[8@X] = reduce_sum[axes=(1,) out_sharding=None] a\n'
                                  '  in (b,) }',
 'shape_dtype_struct_trace': '{ lambda ; a:f32[8@X,4]. let\n'
                             '    b:f32[8@X,4] = sin a\n'
                             '    c:f32[4] = reduce_sum[axes=(0,) out_sharding=None] b\n'
                             '  in (c,) }',
 'solve': 'float32[4@X,3,2]',
 'split': '{ lambda ; a:f32[8@X,4]. let\n'
          '    b:f32[8@X,2] c:f32[8@X,2] = split[axis=1 sizes=(np.int64(2), np.int64(2))] a\n'
          '  in (b, c) }',
 'top_k': 'float32[8@X,2] int32[8@X,2]',
 'triangular_solve': '{ lambda ; a:f32[4@X,3,3] b:f32[4@X,3,2]. let\n'
                     '    c:f32[4@X,3,2] = triangular_solve[\n'
                     '      conjugate_a=False\n'
                     '      left_side=True\n'
                     '      lower=True\n'
                     '      transpose_a=False\n'
                     '      unit_diagonal=False\n'
                     '    ] a b\n'
                     '  in (c,) }',
 'zeros_out_sharding': '{ lambda ; a:f32[8@X,4]. let\n'
                       '    b:f32[8@X,4] = broadcast_in_dim 0.0:f32[]\n'
                       '    c:f32[8@X,4] = add a b\n'
                       '  in (c,) }'}
