use nx_vulkan::ops::elementwise::{binary, BinaryOp};
use nx_vulkan::{DType, Tensor};

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn add_round_trip() {
    let a = Tensor::from_bytes(&[4], DType::F32, &f32s(&[1.0, 2.0, 3.0, 4.0])).unwrap();
    let b = Tensor::from_bytes(&[4], DType::F32, &f32s(&[10.0, 20.0, 30.0, 40.0])).unwrap();
    let c = binary(BinaryOp::Add, &a, &b, &[4], DType::F32).unwrap();
    assert_eq!(c.to_bytes().unwrap(), f32s(&[11.0, 22.0, 33.0, 44.0]));
}
