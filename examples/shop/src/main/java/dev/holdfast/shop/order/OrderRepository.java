package dev.holdfast.shop.order;

import org.springframework.data.jpa.repository.JpaRepository;

import java.util.List;

public interface OrderRepository extends JpaRepository<Order, String> {

    List<Order> findByOrdererOrderByOrderNumber(String orderer);

    List<Order> findAllByOrderByOrderNumber();
}
