package dev.holdfast.shop.config;

import dev.holdfast.shop.order.Address;
import dev.holdfast.shop.order.Order;
import dev.holdfast.shop.order.OrderLine;
import dev.holdfast.shop.order.OrderRepository;
import dev.holdfast.shop.order.OrderState;
import dev.holdfast.shop.order.Receiver;
import dev.holdfast.shop.order.ShippingInfo;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

import java.time.Clock;
import java.util.List;

/** Demo orders for alice and bob, created on start when the order table is empty. */
@Component
class DemoData implements ApplicationRunner {

    private final OrderRepository orders;
    private final Clock clock;

    DemoData(OrderRepository orders, Clock clock) {
        this.orders = orders;
        this.clock = clock;
    }

    @Override
    @Transactional
    public void run(ApplicationArguments args) {
        if (orders.count() > 0) {
            return;
        }
        ShippingInfo alice = new ShippingInfo(
                new Receiver("Alice Kowalski", "+49 30 1234567"),
                new Address("10115", "Invalidenstrasse 12", "3rd floor"));
        ShippingInfo bob = new ShippingInfo(
                new Receiver("Bob Lee", "+82 2 555 0101"), new Address("04524", "Sejong-daero 110", null));
        save(
                "ORD-1001",
                "alice",
                alice,
                OrderState.PREPARING,
                new OrderLine("Cast-iron pan, 28 cm", 4_900, 1),
                new OrderLine("Linen tea towel", 850, 3));
        save(
                "ORD-1002",
                "alice",
                alice,
                OrderState.PAYMENT_WAITING,
                new OrderLine("Espresso cups (set of 4)", 2_400, 1));
        save("ORD-1003", "alice", alice, OrderState.SHIPPED, new OrderLine("Chef's knife", 8_900, 1));
        save(
                "ORD-2001",
                "bob",
                bob,
                OrderState.PREPARING,
                new OrderLine("Bamboo cutting board", 2_900, 1),
                new OrderLine("Olive oil, 1 l", 1_450, 2));
        save("ORD-2002", "bob", bob, OrderState.PREPARING, new OrderLine("Rice cooker", 12_900, 1));
    }

    private void save(String number, String orderer, ShippingInfo shipping, OrderState state, OrderLine... lines) {
        orders.save(new Order(number, orderer, List.of(lines), shipping, state, clock.instant()));
    }
}
